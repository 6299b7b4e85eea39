/** Environment of every test worker: the run's database and fixed test secrets. */
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = process.env.TEST_DATABASE_URL;
process.env.DATABASE_APP_URL = process.env.TEST_DATABASE_APP_URL;
// Direct connections: the named mode is legitimate here and stays covered; the PgBouncer tiers run the default (off).
process.env.DATABASE_PREPARED_STATEMENTS = 'true';
process.env.SECRET_ENCRYPTION_KEY = 'test-encryption-key-0123456789abcdef0123456789';
process.env.JWT_SECRET = 'test-jwt-secret-abcdef0123456789abcdef0123456789';
process.env.LOG_LEVEL = 'silent';
process.env.PUBLIC_URL = 'http://localhost:3000';
process.env.SSO_ALLOW_INSECURE_LOOPBACK_IDP = 'true';
delete process.env.REDIS_URL;
delete process.env.IS_HOSTED;
process.env.PRINCIPAL_CACHE_TTL_MS = '0';
