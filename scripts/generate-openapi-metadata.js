/**
 * Writes src/metadata.ts: the OpenAPI schema of every DTO, produced by the @nestjs/swagger
 * plugin from the TypeScript types and class-validator decorators. Loaded at start-up, so the
 * same schema is served whether the code was compiled by `nest build` or transpiled by ts-jest.
 */
const { existsSync, writeFileSync } = require('node:fs');
const { resolve } = require('node:path');
const { PluginMetadataGenerator } = require('@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator');
const { ReadonlyVisitor } = require('@nestjs/swagger/dist/plugin');

const root = resolve(__dirname, '..');
const output = resolve(root, 'src', 'metadata.ts');
// The generator type-checks the program, which imports this file: give a fresh clone a stub first.
if (!existsSync(output)) writeFileSync(output, 'export default async () => ({});\n');
new PluginMetadataGenerator().generate({
  visitors: [
    new ReadonlyVisitor({ introspectComments: true, pathToSource: resolve(root, 'src'), classValidatorShim: true, dtoFileNameSuffix: ['.dto.ts'] }),
  ],
  outputDir: resolve(root, 'src'),
  watch: false,
  tsconfigPath: 'tsconfig.build.json',
});
