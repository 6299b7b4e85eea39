import { Global, Module } from '@nestjs/common';
import { PasswordService } from './password.service';
import { SecretBoxService } from './secret-box.service';

@Global()
@Module({ providers: [SecretBoxService, PasswordService], exports: [SecretBoxService, PasswordService] })
export class CryptoModule {}
