import { it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { cfworkerJsonSchema } from '../src/csp.ts';
it('probe', () => {
  for (const d of ['draft7', 'draft2020-12']) {
    const dir = `/work/shared/data/JSON-Schema-Test-Suite/tests/${d}`;
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      for (const group of JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'))) {
        let check;
        const schema = d === 'draft7' && typeof group.schema === 'object' ? { $schema: 'http://json-schema.org/draft-07/schema#', ...group.schema } : group.schema;
        try { check = cfworkerJsonSchema(schema); } catch { continue; }
        for (const t of group.tests) {
          let r; try { r = check(t.data); } catch { continue; }
          if (!r.ok) for (const i of r.issues) if (/undefined/.test(i.message) || i.message === '' ) console.log('UNDEF', d, f, group.description, '|', t.description, JSON.stringify(i));
          if (!r.ok && r.issues.length === 0) console.log('EMPTY', d, f, group.description, '|', t.description);
        }
      }
    }
  }
});
