// Parsing the two reward files, Task Folder Verifiers § "Reward files". Each parser either returns the
// parsed rewards or a one-line problem naming the file, the key and the value.

export type RewardFileParse =
  | { ok: true; reward: number; rewards: Record<string, number>; components?: Record<string, number> }
  | { ok: false; problem: string };

const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function snippet(text: string, max = 80): string {
  const flat = JSON.stringify(text);
  return flat.length <= max ? flat : flat.slice(0, max - 2) + '…"';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${snippet(value)}`;
  if (typeof value === 'number') return String(value);
  return `a value of type ${typeof value}`;
}

/** reward.txt holds one number (surrounding whitespace allowed), which is the reward. */
export function parseRewardTxt(raw: string): RewardFileParse {
  const text = raw.trim();
  if (text === '') return { ok: false, problem: 'reward.txt is empty' };
  if (!NUMBER_TEXT.test(text)) {
    return { ok: false, problem: `reward.txt must hold one number, found ${snippet(text)}` };
  }
  const value = Number(text) + 0; // + 0 turns -0 into 0
  if (!Number.isFinite(value)) {
    return { ok: false, problem: `reward.txt holds ${snippet(text)}, which is not a finite number` };
  }
  return { ok: true, reward: value, rewards: { reward: value } };
}

/**
 * reward.json holds a non-empty JSON object of numbers; booleans count as numbers (true = 1, false = 0).
 * A `reward` key is the score and other keys are metrics. Without `reward`, every key is a component and the
 * score is their sum.
 */
export function parseRewardJson(raw: string): RewardFileParse {
  if (raw.trim() === '') return { ok: false, problem: 'reward.json is empty' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return { ok: false, problem: `reward.json is not valid JSON (${(err as Error).message})` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: `reward.json must hold a JSON object of numbers, found ${describe(parsed)}` };
  }
  const entries: Array<[string, number]> = [];
  for (const [key, value] of Object.entries(parsed)) {
    let n: number;
    if (typeof value === 'boolean') n = value ? 1 : 0;
    else if (typeof value === 'number') n = value;
    else {
      return {
        ok: false,
        problem: `reward.json key ${JSON.stringify(key)} is ${describe(value)}, not a number`,
      };
    }
    // JSON has no NaN or Infinity, but an overflowing literal such as 1e999 parses to Infinity.
    if (!Number.isFinite(n)) {
      return { ok: false, problem: `reward.json key ${JSON.stringify(key)} is not a finite number` };
    }
    entries.push([key, n + 0]);
  }
  if (entries.length === 0) return { ok: false, problem: 'reward.json holds an empty object' };
  // fromEntries defines own properties, so a key named "__proto__" stays an ordinary key.
  const rewards = Object.fromEntries(entries) as Record<string, number>;
  if (Object.prototype.hasOwnProperty.call(rewards, 'reward')) {
    return { ok: true, reward: rewards['reward'] as number, rewards };
  }
  const sum = entries.reduce((acc, [, n]) => acc + n, 0);
  if (!Number.isFinite(sum)) {
    return {
      ok: false,
      problem: `reward.json has no "reward" key and its components (${entries.map(([k]) => k).join(', ')}) have no finite sum`,
    };
  }
  return { ok: true, reward: sum, rewards, components: { ...rewards } };
}
