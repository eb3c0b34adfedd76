// Little JavaScript: prevent double submission of forms (a second click would place a second order).
document.addEventListener('submit', function (event) {
  var form = event.target;
  if (form.dataset.submitted) { event.preventDefault(); return; }
  form.dataset.submitted = '1';
  var button = form.querySelector('button[type="submit"]');
  if (button && button.dataset.busy) { button.disabled = true; button.textContent = button.dataset.busy; }
});
