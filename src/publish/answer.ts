// solution/answer.md as Harbor's oracle can use it (Task Folder Verifiers § Reference answers: publish "turns
// the file into a solve.sh that writes it"): a script that writes the file's exact bytes to answer.md in the
// working directory, where Berth's oracle puts it. base64, because the answer may hold any byte; Berth's oracle
// needs base64 in the image too.

export function solveShForAnswer(answer: Buffer): string {
  return [
    '#!/bin/bash',
    '# Written by `berth publish --harbor` from solution/answer.md: writes the reference answer, byte for byte, to',
    '# answer.md in the working directory, as Berth\'s oracle does.',
    'set -euo pipefail',
    `printf '%s' '${answer.toString('base64')}' | base64 -d > answer.md`,
    '',
  ].join('\n');
}
