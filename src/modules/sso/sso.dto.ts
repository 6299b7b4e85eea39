/** The answer of an SSO administration route that has nothing else to say (a removal). */
export class SsoSuccessDto {
  success: true;
}
