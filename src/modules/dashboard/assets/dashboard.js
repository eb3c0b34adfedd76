// Little JavaScript, all optional: pages work without it.
document.documentElement.classList.add('js');

// Prevent double submission (a second click would place a second order).
document.addEventListener('submit', (event) => {
  var form = event.target;
  if (form.dataset.submitted) {
    event.preventDefault();
    return;
  }
  form.dataset.submitted = '1';
  var button = form.querySelector('button[type="submit"][data-busy]');
  if (button) {
    button.disabled = true;
    button.textContent = button.dataset.busy;
  }
});

// Option pickers re-price the page as soon as a choice changes.
document.addEventListener('change', (event) => {
  var form = event.target.form;
  if (form?.hasAttribute('data-autosubmit')) form.submit();
});

// After a failed submit, move focus to the list of problems.
window.addEventListener('DOMContentLoaded', () => {
  var problems = document.getElementById('problems');
  if (problems) problems.focus();
});
