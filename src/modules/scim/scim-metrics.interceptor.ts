import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { Observable, tap } from 'rxjs';
import { MetricsService } from '../../infra/metrics/metrics.service';

/** Counts a SCIM operation that succeeded; ScimExceptionFilter counts the ones that fail (the guard's 401 included). */
@Injectable()
export class ScimMetricsInterceptor implements NestInterceptor {
  constructor(private readonly metrics: MetricsService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    return next.handle().pipe(tap(() => this.metrics.scim(req.method, (req.route as { path?: string } | undefined)?.path, 200)));
  }
}
