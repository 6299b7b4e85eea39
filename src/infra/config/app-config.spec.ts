import { ConfigError, loadConfig } from './app-config';

/** Issue 15 item 6: `PORT=abc` answered with three range messages about a number nobody gave. */
describe('numeric settings', () => {
  const secrets = { NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
  const problem = (env: Record<string, string>) => {
    try {
      loadConfig({ ...secrets, ...env });
      return null;
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
  };

  it('says PORT=abc is not a number, in one line', () => {
    expect(problem({ PORT: 'abc' })).toBe('Invalid configuration:\n  - PORT: PORT must be a whole number from 0 to 65535, not "abc"');
  });

  it('refuses what Number() would have read as something else', () => {
    for (const PORT of [' 80', '0x50', '1e3', '3.5', '-1', '80abc']) expect(problem({ PORT })).toContain(`PORT must be a whole number from 0 to 65535, not ${JSON.stringify(PORT)}`);
  });

  it('refuses a port out of range and names the range', () => {
    expect(problem({ PORT: '70000' })).toContain('PORT must be a whole number from 0 to 65535, not "70000"');
  });

  it('reads a port, and the other numeric settings, when they are whole numbers in range', () => {
    expect(problem({ PORT: '8080', PAM_PENDING_TTL_MINUTES: '30', PAM_PREVIEW_SCAN_LIMIT: '5000', PRINCIPAL_CACHE_TTL_MS: '0' })).toBeNull();
    expect(loadConfig({ ...secrets, PORT: '8080' }).port).toBe(8080);
    expect(loadConfig({ ...secrets }).port).toBe(3000);
  });

  it('words every numeric setting the same way', () => {
    expect(problem({ PAM_PENDING_TTL_MINUTES: 'soon' })).toContain('PAM_PENDING_TTL_MINUTES must be a whole number from 1 to 1440, not "soon"');
    expect(problem({ PAM_PREVIEW_SCAN_LIMIT: '0' })).toContain('PAM_PREVIEW_SCAN_LIMIT must be a whole number of at least 1, not "0"');
  });
});

/** Which proxies are believed about the client address: every per-address rate limit rests on it. */
describe('TRUST_PROXY', () => {
  const secrets = { NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
  const read = (TRUST_PROXY?: string) => loadConfig({ ...secrets, ...(TRUST_PROXY === undefined ? {} : { TRUST_PROXY }) }).trustProxy;

  it('believes only a proxy on the loopback interface by default', () => {
    expect(read()).toBe('loopback');
  });

  it('reads a hop count, and a list of proxy names and addresses with prefixes', () => {
    expect(read('1')).toBe(1);
    expect(read('loopback, 10.0.0.0/8,192.168.1.7, fd00::/8')).toBe('loopback,10.0.0.0/8,192.168.1.7,fd00::/8');
  });

  it('refuses to believe every hop, which would let any client pick its own address', () => {
    expect(() => read('true')).toThrow(/TRUST_PROXY lists "true"/);
  });

  it('refuses malformed entries and hop counts past 10, naming them', () => {
    for (const [value, named] of [['10.0.0.0/33', '10.0.0.0/33'], ['proxy.internal', 'proxy.internal'], ['loopback,1.2.3', '1.2.3'], ['::1/129', '::1/129']]) {
      expect(() => read(value)).toThrow(new RegExp(`"${named.replace(/[./]/g, '\\$&')}"`));
    }
    expect(() => read('11')).toThrow(/hop count from 0 to 10/);
  });
});

/** Issue 18: every wait on the database is bounded, with defaults and limits of its own. */
describe('database pool and timeouts', () => {
  const secrets = { NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
  const read = (env: Record<string, string> = {}) => loadConfig({ ...secrets, ...env });
  const problem = (env: Record<string, string>) => {
    try {
      read(env);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('bounds every wait by default', () => {
    expect(read()).toMatchObject({ databasePoolSize: 20, databasePoolTimeoutMs: 5000, databaseStatementTimeoutMs: 30_000, databaseIdleInTransactionTimeoutMs: 60_000 });
  });

  it('reads each setting at the edges of its range, 0 turning a timeout off', () => {
    expect(read({ DATABASE_POOL_SIZE: '1', DATABASE_POOL_TIMEOUT_MS: '100', DATABASE_STATEMENT_TIMEOUT_MS: '0', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' })).toMatchObject({
      databasePoolSize: 1,
      databasePoolTimeoutMs: 100,
      databaseStatementTimeoutMs: 0,
      databaseIdleInTransactionTimeoutMs: 0,
    });
    expect(read({ DATABASE_POOL_SIZE: '1000', DATABASE_POOL_TIMEOUT_MS: '600000', DATABASE_STATEMENT_TIMEOUT_MS: '86400000' })).toMatchObject({
      databasePoolSize: 1000,
      databasePoolTimeoutMs: 600_000,
      databaseStatementTimeoutMs: 86_400_000,
    });
  });

  it('refuses a value one past either edge, and one that is not a whole number', () => {
    expect(problem({ DATABASE_POOL_SIZE: '0' })).toContain('DATABASE_POOL_SIZE must be a whole number from 1 to 1000, not "0"');
    expect(problem({ DATABASE_POOL_SIZE: '1001' })).toContain('DATABASE_POOL_SIZE must be a whole number from 1 to 1000, not "1001"');
    // An acquisition wait of 0 would mean waiting forever in pg-pool: refused.
    expect(problem({ DATABASE_POOL_TIMEOUT_MS: '99' })).toContain('DATABASE_POOL_TIMEOUT_MS must be a whole number from 100 to 600000, not "99"');
    expect(problem({ DATABASE_STATEMENT_TIMEOUT_MS: '86400001' })).toContain('DATABASE_STATEMENT_TIMEOUT_MS must be a whole number from 0 to 86400000');
    expect(problem({ DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '30s' })).toContain('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number from 0 to 86400000, not "30s"');
  });
});

/** When agents were last seen (issue 28, item 5): how often it is written, and when an agent counts as online. */
describe('agent presence settings', () => {
  const secrets = { NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
  const read = (env: Record<string, string> = {}) => loadConfig({ ...secrets, ...env });

  it('flushes every 30 seconds and counts an agent online for 3 minutes by default', () => {
    expect(read()).toMatchObject({ agentPresenceFlushMs: 30_000, agentOnlineThresholdMs: 180_000 });
  });

  it('reads both when the threshold is more than twice the flush interval', () => {
    expect(read({ AGENT_PRESENCE_FLUSH_MS: '100', AGENT_ONLINE_THRESHOLD_MS: '201' })).toMatchObject({ agentPresenceFlushMs: 100, agentOnlineThresholdMs: 201 });
  });

  it('refuses a threshold that an agent calling steadily could outlast between two writes', () => {
    expect(() => read({ AGENT_PRESENCE_FLUSH_MS: '100', AGENT_ONLINE_THRESHOLD_MS: '200' })).toThrow(/AGENT_ONLINE_THRESHOLD_MS \(200\) must be more than twice AGENT_PRESENCE_FLUSH_MS \(100\)/);
    expect(() => read({ AGENT_ONLINE_THRESHOLD_MS: '60000' })).toThrow(ConfigError);
  });

  it('refuses a flush interval under 50 ms, and one that is not a whole number', () => {
    expect(() => read({ AGENT_PRESENCE_FLUSH_MS: '49' })).toThrow('AGENT_PRESENCE_FLUSH_MS must be a whole number from 50 to 3600000, not "49"');
    expect(() => read({ AGENT_PRESENCE_FLUSH_MS: '30s' })).toThrow('AGENT_PRESENCE_FLUSH_MS must be a whole number from 50 to 3600000, not "30s"');
  });
});
