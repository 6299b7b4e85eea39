import { toJsonSchema } from '../../../common/shape/shape.util';
import { INTERCHANGE_SHAPE } from './interchange.shape';

/**
 * The JSON Schema published as docs/import-format.schema.json, produced from the same shape
 * the API checks documents with (a unit test keeps the file equal to this). Rules that relate
 * values to each other (locations of a customer, custom-field keys in group filters, policy
 * features, assignment targets) are enforced by the API and described in docs/import-format.md.
 */
export function interchangeJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://rmm.example/schemas/import-format.schema.json',
    title: 'RMM interchange document (POST /api/v1/imports)',
    ...toJsonSchema(INTERCHANGE_SHAPE),
  };
}
