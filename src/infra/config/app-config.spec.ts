import { ConfigError, loadConfig, tracingSettings } from './app-config';

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

/** Issue 29: tracing is off unless an OTLP endpoint is configured, with the standard OpenTelemetry variables. */
describe('tracing settings', () => {
  const secrets = { NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) };
  const read = (env: Record<string, string>) => loadConfig({ ...secrets, ...env }).tracing;

  it('is off without an endpoint, whatever the sampler variables say', () => {
    expect(read({})).toBeNull();
    expect(read({ OTEL_TRACES_SAMPLER: 'jaeger_remote', OTEL_TRACES_SAMPLER_ARG: 'endpoint=http://x' })).toBeNull();
  });

  it('sends to /v1/traces under OTEL_EXPORTER_OTLP_ENDPOINT, every request sampled unless its caller decided otherwise', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' })).toEqual({ tracesUrl: 'http://otel-collector:4318/v1/traces', sampler: 'parentbased_always_on', samplerRatio: 1 });
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://tempo.example/otlp/' })?.tracesUrl).toBe('https://tempo.example/otlp/v1/traces');
  });

  it('takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as the traces URL itself, ahead of the base', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom/traces' })?.tracesUrl).toBe('http://b:4318/custom/traces');
  });

  it('refuses an endpoint that is not an http(s) URL, or that holds credentials, without repeating it', () => {
    expect(() => read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL/);
    expect(() => read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT is not a URL/);
    let message = '';
    try {
      read({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:s3cret@collector.example/v1/traces' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must not hold a user name or password: send credentials as headers with OTEL_EXPORTER_OTLP_HEADERS/);
    expect(message).not.toContain('s3cret');
  });

  it('reads the standard samplers, and a ratio from 0 to 1 at both edges', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(read({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toMatchObject({ sampler: 'parentbased_traceidratio', samplerRatio: 0.25 });
    expect(read({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })?.samplerRatio).toBe(0);
    expect(read({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' })?.samplerRatio).toBe(1);
  });

  it('refuses an unknown sampler and a ratio past either edge or not a number', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(() => read({ ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio/);
    for (const arg of ['1.01', '-0.1', 'half', '1e-1']) {
      expect(() => read({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg })).toThrow(/OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
    }
  });

  it('is read the same way before the configuration is loaded, from the same variables', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }));
    expect(tracingSettings({})).toBeNull();
  });
});
