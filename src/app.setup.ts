import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import cookieParser from 'cookie-parser';
import { json, urlencoded } from 'express';
import helmet from 'helmet';
import { createValidationPipe } from './common/pipes/validation.pipe';
import { requestId } from './infra/logging/logging';
import { ERROR_BODY_SCHEMA } from './common/errors/error-body.schema';

export const API_PREFIX = 'api/v1';
/** Agent ingest bodies are capped at 32 KB on the bytes actually read (pam.md 8). */
export const AGENT_BODY_LIMIT = 32 * 1024;

/** Everything main.ts and the tests share, so tests exercise the served configuration. */
export function configureApp(app: NestExpressApplication, opts: { logs?: boolean } = {}): void {
  if (opts.logs !== false) app.useLogger(app.get(Logger));
  app.use((req: Parameters<typeof requestId>[0], res: Parameters<typeof requestId>[1], next: () => void) => {
    requestId(req, res);
    next();
  });
  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          imgSrc: ["'self'", 'data:', 'https:'],
          styleSrc: ["'self'", "'unsafe-inline'"],
          scriptSrc: ["'self'", "'unsafe-inline'"],
          formAction: ["'self'", 'https:', 'http:'],
        },
      },
    }),
  );
  app.set('trust proxy', 'loopback');
  app.set('etag', false);
  app.use(`/${API_PREFIX}/agents`, json({ limit: AGENT_BODY_LIMIT }));
  app.use(json({ limit: '1mb' }));
  app.use(urlencoded({ extended: false, limit: '1mb' }));
  app.use(cookieParser());
  app.setGlobalPrefix(API_PREFIX);
  app.useGlobalPipes(createValidationPipe());
  app.useStaticAssets(join(__dirname, 'web'), { index: false, extensions: ['html'] });
  app.enableShutdownHooks();

  const doc = new DocumentBuilder()
    .setTitle('RMM identity and privileged access API')
    .setDescription(
      'SSO (OIDC, SAML), login branding, tenancy administration and privileged-access elevation. ' +
        'Every error has the body `ErrorBody`. Authenticate with a bearer JWT (from /auth/login or /sso/exchange), ' +
        'an API key (`Bearer sk_…`), or, for agent routes, the agent token issued at enrolment.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key: sk_…' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Agent token issued at enrolment' }, 'agent')
    .build();
  const document = SwaggerModule.createDocument(app, doc);
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ErrorBody: ERROR_BODY_SCHEMA } };
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json' });
}
