import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../../common/decorators/auth.decorator';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

  /**
   * Liveness: answers while the process runs.
   *
   * @remarks Public.
   */
  @Get()
  @Public({ transaction: 'none' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: answers 200 while the database answers, an error otherwise.
   *
   * @remarks Public.
   */
  @Get('ready')
  @Public({ transaction: 'none' })
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.db.pingCheck('database', { timeout: 2000 })]);
  }
}
