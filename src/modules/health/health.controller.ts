import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../common/decorators/no-request-transaction.decorator';
import { AppException } from '../../common/errors/app.exception';
import { DrainState } from './drain-state';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly drain: DrainState,
  ) {}

  /**
   * Liveness: answers while the process runs.
   *
   * @remarks Public.
   */
  @Get()
  @Public()
  @NoRequestTransaction()
  @ApiOkResponse({ description: 'The process runs.', schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: answers 200 while the database answers; 503 when it does not, and from the moment
   * the instance starts shutting down (`draining`), so a load balancer stops sending it requests.
   *
   * @remarks Public.
   */
  @Get('ready')
  @Public()
  @NoRequestTransaction()
  @HealthCheck()
  @ApiErrors({ 503: ['draining', 'not_ready'] })
  async ready(): Promise<HealthCheckResult> {
    if (this.drain.draining) throw new AppException(503, 'draining', 'The instance is shutting down');
    try {
      return await this.health.check([() => this.db.pingCheck('database', { timeout: 2000 })]);
    } catch {
      // Terminus reports a failed check as an exception of its own; the answer stays a 503 in the project's shape.
      throw new AppException(503, 'not_ready', 'The database does not answer');
    }
  }
}
