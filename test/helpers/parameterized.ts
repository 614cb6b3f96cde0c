// A parameterized dataset for the engine tests (docs/parameterized-and-publish.md): the dataset root is the
// template, typed by a Pydantic task_data.py, graded by a Python verifier that gives partial credit through
// reward.json, with rows whose reference answers are right, close and wrong, and one row task_data.py rejects.
import { writeDataset } from './tasks.ts';

export const VERIFIER_V1 = [
  'from nemo_gym.verifiers.files import read_text',
  '',
  'def verify(workspace, task_data):',
  '    written = read_text(workspace, "answer.md")',
  '    if written is None:',
  '        return {"reward": 0.0, "exact": 0.0}',
  '    value = int(written.strip())',
  '    exact = value == task_data["answer"]',
  '    close = abs(value - task_data["answer"]) <= task_data.get("tolerance", 1)',
  '    return {"reward": 1.0 if exact else 0.5 if close else 0.0, "exact": 1.0 if exact else 0.0}',
  '',
].join('\n');

export const parameterizedDataset = (): string => writeDataset({
  'task_data.py': [
    'from pydantic import BaseModel, ConfigDict, Field',
    'class TaskData(BaseModel):',
    '    model_config = ConfigDict(extra="allow")',
    '    question: str',
    '    answer: int',
    '    given: int',
    '    tolerance: int = Field(default=1, ge=0)',
    '',
  ].join('\n'),
  'task.toml': '[task]\nname = "berth-tests/sum"\n[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
  'instruction.template.md': 'Compute {{ question }} and write the number to answer.md.\n',
  'solution/answer.template.md': '{{ task_data.given }}\n',
  'tests/verifier.py': VERIFIER_V1,
  'tasks.jsonl': [
    '{"task_id": "right", "task_data": {"question": "2+2", "answer": 4, "given": 4}}',
    '{"task_id": "close", "task_data": {"question": "3+3", "answer": 6, "given": 7}}',
    '{"task_id": "wrong", "question": "4+4", "answer": 8, "given": 80, "tolerance": 2}',
    '{"task_id": "untyped", "question": "5+5", "answer": "ten", "given": 10}',
    '',
  ].join('\n'),
});
