// Validates SARIF logs against the SARIF 2.1.0 JSON schema (OASIS, draft-04),
// with the schema and the validator set-up of Microsoft's SARIF SDK
// (@microsoft/jest-sarif's toBeValidSarifLog). Usage: node validate-sarif.cjs FILE...
'use strict';
const fs = require('fs');
const Ajv = require('ajv');
const schema = require('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');

const ajv = new Ajv({ schemaId: 'auto', validateSchema: false, allErrors: true });
ajv.addMetaSchema(require('ajv/lib/refs/json-schema-draft-04.json'));
const validate = ajv.compile(schema);
let failed = 0;
for (const file of process.argv.slice(2)) {
  if (validate(JSON.parse(fs.readFileSync(file, 'utf8')))) {
    console.log(`${file}: valid SARIF 2.1.0`);
  } else {
    failed += 1;
    console.log(`${file}: invalid SARIF 2.1.0`);
    for (const e of validate.errors) console.log(`  ${e.dataPath || '/'} ${e.message}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
