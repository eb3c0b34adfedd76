/**
 * Asks `question` on `output` and reads one line typed on the terminal `input` without showing it: the terminal is put
 * in raw mode, so it echoes nothing, and nothing is written back for the characters typed. Enter ends the line;
 * Backspace erases; Ctrl-C, or Ctrl-D on an empty line, rejects with an Error. `input` must be a TTY
 * (process.stdin when `process.stdin.isTTY`); it is paused again once the line is read. `listen` reads its API key
 * with it (AUTH-13).
 */
export function promptHidden(
  question: string,
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error: Error | null) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(null);
        if (ch === '\u0003') return finish(new Error('Cancelled'));
        if (ch === '\u0004' && !value) return finish(new Error('Nothing was typed'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    output.write(question);
    input.setEncoding('utf8');
    input.setRawMode(true);
    input.on('data', onData);
    input.resume();
  });
}
