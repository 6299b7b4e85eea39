import { Body, Controller, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../common/decorators/no-request-transaction.decorator';
import { UuidParam } from '../../common/pipes/uuid.pipe';
import type { Principal } from '../../common/principal';
import { IMPORT_JSON_MEDIA_TYPE } from './import-body.middleware';
import { AcknowledgeMatchDto, CreateImportQueryDto, ImportListDto, ImportMatchListDto, ImportMatchResponseDto, ImportResponseDto, ListImportsQueryDto } from './import.dto';
import { ImportService } from './import.service';
import { ApiBodyContent, ApiErrors } from '../../common/decorators/api-errors.decorator';
import { toOpenApi30 } from '../../common/openapi/json-schema';
import { interchangeJsonSchema } from './document/interchange.schema';

/** The interchange document's published JSON Schema, as OpenAPI 3.0 says it. */
const INTERCHANGE_SCHEMA = toOpenApi30(interchangeJsonSchema());

/** Imports write across organizations in bulk (scripts and policies included), so starting one or acknowledging a match needs MFA. */
@ApiTags('imports')
@Controller('imports')
export class ImportController {
  constructor(private readonly imports: ImportService) {}

  /**
   * Starts an import from another RMM; answers 202 with the job, which runs in the background.
   *
   * @remarks Needs `imports:write` and an MFA session. The body is an interchange document (`application/json` up
   * to 1 MB, or the same bytes as `application/vnd.rmm-import+json` up to 64 MB) or a CSV file (`text/csv`, with
   * `type=contacts` or `type=custom-field-values`). A document that does not validate is 400 with the path of each
   * problem. Poll `GET /imports/{id}`.
   */
  @Post()
  @HttpCode(202)
  @ApiBodyContent('An interchange document (docs/import-format.md, JSON Schema docs/import-format.schema.json), or a CSV file of contacts or custom-field values.', {
    'application/json': { $ref: '#/components/schemas/InterchangeDocument' },
    [IMPORT_JSON_MEDIA_TYPE]: { $ref: '#/components/schemas/InterchangeDocument' },
    'text/csv': { type: 'string', description: 'A CSV file with a header row (docs/import-format.md); `type` says what the rows are.' },
  }, { InterchangeDocument: INTERCHANGE_SCHEMA })
  @Auth({ permission: 'imports:write', mfa: true })
  @NoRequestTransaction()
  @ApiErrors({ 403: ['partner_scope_required'] })
  create(@CurrentPrincipal() principal: Principal, @Query() query: CreateImportQueryDto, @Req() req: Request): Promise<ImportResponseDto> {
    return this.imports.create(principal, query, { contentType: (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase(), body: req.body });
  }

  /**
   * Lists imports, newest first, a page at a time.
   *
   * @remarks Needs `imports:write`.
   */
  @Get()
  @Auth({ permission: 'imports:write' })
  list(@Query() query: ListImportsQueryDto): Promise<ImportListDto> {
    return this.imports.list(query);
  }

  /**
   * Reads an import: phase, counts, percent, and its report once it has completed or failed.
   *
   * @remarks Needs `imports:write`.
   */
  @Get(':id')
  @Auth({ permission: 'imports:write' })
  get(@UuidParam() id: string): Promise<ImportResponseDto> {
    return this.imports.get(id);
  }

  /**
   * Lists the uncertain matches an import held back (a contact that looks like an existing one).
   *
   * @remarks Needs `imports:write`.
   */
  @Get(':id/matches')
  @Auth({ permission: 'imports:write' })
  matches(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ImportMatchListDto> {
    return this.imports.matches(principal, id);
  }

  /**
   * Resolves a held-back match: merge into the existing record, or create a new one.
   *
   * @remarks Needs `imports:write` and an MFA session. 409 `match_resolved` when it was already resolved.
   */
  @Post(':id/matches/:matchId/acknowledge')
  @HttpCode(200)
  @Auth({ permission: 'imports:write', mfa: true })
  @ApiErrors({ 409: ['match_resolved', 'candidate_gone', 'external_id_taken'] })
  acknowledge(
    @CurrentPrincipal() principal: Principal,
    @UuidParam() id: string,
    @UuidParam('matchId') matchId: string,
    @Body() dto: AcknowledgeMatchDto,
  ): Promise<ImportMatchResponseDto> {
    return this.imports.acknowledge(principal, id, matchId, dto.action);
  }
}
