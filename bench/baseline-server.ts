import { createServer } from 'node:http';
import { Pool } from 'pg';

/**
 * The baseline every write path is compared with: bare node:http and pg, one transactional
 * INSERT per request, nothing else (no framework, no auth, no validation).
 */
const pool = new Pool({ connectionString: process.env.BASELINE_DATABASE_URL, max: 20 });
const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query('INSERT INTO bench_baseline (payload) VALUES ($1) RETURNING id', [Buffer.concat(chunks).toString('utf8')]);
      await client.query('COMMIT');
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: rows[0].id }));
    } catch {
      await client.query('ROLLBACK').catch(() => undefined);
      res.writeHead(500).end();
    } finally {
      client.release();
    }
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
