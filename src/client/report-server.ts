// `berth view`: the report's file set served on localhost, each page rendered from the results folder when asked
// for, so rows that arrived since the last look show up.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reportSite, type WriteReportOptions } from './report-folder.ts';

export interface ReportServer { url: string; server: Server; close(): Promise<void> }

export async function serveReport(opts: WriteReportOptions & { port?: number }): Promise<ReportServer> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname).replace(/^\/+/, '');
    let html: string | undefined;
    let status = 200;
    try {
      const site = reportSite(opts);
      html = site.render(path === '' ? site.index : path);
      if (html === undefined) {
        status = 404;
        html = `no page ${path} in the report of ${opts.batchId}`;
      }
    } catch (err) {
      status = 500;
      html = `cannot render ${path}: ${(err as Error).message}`;
    }
    res.writeHead(status, {
      'content-type': status === 200 ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      'cache-control': 'no-store',
    });
    res.end(html);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
