import { Module } from '@nestjs/common';
import { PamRequestsModule } from '../requests/pam-requests.module';
import { ActuationController } from './actuation.controller';
import { ActuationRepository } from './actuation.repository';
import { ActuationService } from './actuation.service';

/** POST /devices/:id/actuate-elevation. */
@Module({
  imports: [PamRequestsModule],
  controllers: [ActuationController],
  providers: [ActuationRepository, ActuationService],
})
export class PamActuationModule {}
