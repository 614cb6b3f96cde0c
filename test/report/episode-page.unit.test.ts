import { describe, expect, it } from 'vitest';
import { readEpisodeFiles } from '../../src/client/episode-files.ts';
import { renderEpisodePage } from '../../src/client/report-episode.ts';
import { episodePagePath } from '../../src/client/report-paths.ts';
import { episodeLogs, TOOL_SCRIPT } from './episode-fixture.ts';
import { row } from './fixtures.ts';

const opts = (attempts = [] as ReturnType<typeof row>[]) => ({ batchId: 'b', batchPage: '../report.html', uiLink: 'http://ui/x', attempts });

describe('the episode page', () => {
  it('escapes everything that comes from the model, the tools, the verifier and the row', () => {
    const evil = '<script>window.__pwned = true</script>';
    const r = row({ task_id: `t${evil}`, repeat: 1, failure_kind: `k${evil}`, failure_reason: evil, timings: { [`p${evil}`]: 1 }, regraded_from: evil });
    const html = renderEpisodePage(r, readEpisodeFiles(episodeLogs({ stdout: evil, reward: evil })), opts());
    expect(html).not.toMatch(/<script|<img/i);
    expect(html).not.toMatch(/<[^>]*\son\w+=/i);
    expect(html).toContain('&lt;script&gt;window.__pwned = true&lt;/script&gt;&lt;img src=&quot;http://example.invalid/x.png&quot;&gt;');
    expect(TOOL_SCRIPT).toContain('<img');
  });

  it('says why there are no logs, and links the other attempts of the same (task, repeat)', () => {
    const a1 = row({ task_id: 't', repeat: 1, attempt: 1, reward: null, mask_sample: true, failure_kind: 'provider_unavailable' });
    const a2 = row({ task_id: 't', repeat: 1, attempt: 2, reward: 0.5, regraded_from: a1.workflow_id, logs_dir: '/nowhere/on/this/host' });
    const html = renderEpisodePage(a2, readEpisodeFiles(a2.logs_dir), opts([a1, a2]));
    expect(html).toContain('/nowhere/on/this/host is not on this machine');
    expect(html).toContain(`regrade of <code>${a1.workflow_id}</code>`);
    expect(html).toContain(`href="${episodePagePath(a1).replace('episodes/', '')}"`);
    expect(html).toContain('<b>attempt 2 (regrade): reward 0.5</b> (this page)');
  });

  it('page paths are unique per attempt and safe as file names', () => {
    const a = row({ task_id: '../../etc/passwd', repeat: 1 });
    const b = row({ task_id: '../../etc/passwd', repeat: 1, attempt: 2 });
    expect(episodePagePath(a)).toMatch(/^episodes\/etc-passwd-r1-a1-[0-9a-f]{8}\.html$/);
    expect(episodePagePath(a)).not.toBe(episodePagePath(b));
  });
});
