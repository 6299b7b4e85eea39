import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rule of acting on a person (1763701900000) with plans that last: its functions read across
 * tenants with `SET app.scope = 'system'`, and a SQL function with a SET clause is never inlined
 * into its caller, so PostgreSQL planned each one's statement again at every call (1.5 ms for
 * `app_may_grant`, paid by every SCIM POST and every membership change's trigger). As PL/pgSQL,
 * with the same statement as its body, a function keeps its plan for the connection's life
 * (0.1 ms). Same bodies, same signatures, same settings; only the language changes, so the
 * rule stays written once, in the earlier migration.
 */
const RULE_FUNCTIONS = ['app_person_reach', 'app_may_act_on', 'app_may_grant', 'app_may_act_on_identity', 'app_account_owner', 'app_may_change_email'];

/** Recreates each function in the other language: its body is the one statement, returned. */
const relanguage = (to: 'plpgsql' | 'sql') => `
  DO $do$
  DECLARE
    f record;
    v_body text;
  BEGIN
    FOR f IN SELECT p.oid, p.proname, p.proretset, p.prosrc FROM pg_proc p
              WHERE p.pronamespace = 'public'::regnamespace AND p.proname = ANY (ARRAY['${RULE_FUNCTIONS.join("', '")}'])
    LOOP
      v_body := CASE
        WHEN '${to}' = 'sql' THEN regexp_replace(f.prosrc, '^\\s*BEGIN RETURN (QUERY )?\\(?(.*?)\\)?;\\s*END\\s*$', '\\2', 's')
        WHEN f.proretset THEN format('BEGIN RETURN QUERY %s; END', f.prosrc)
        ELSE format('BEGIN RETURN (%s); END', f.prosrc)
      END;
      EXECUTE format('CREATE OR REPLACE FUNCTION public.%I(%s) RETURNS %s LANGUAGE ${to} STABLE SET app.scope = %L AS %L',
                     f.proname, pg_get_function_arguments(f.oid), pg_get_function_result(f.oid), 'system', v_body);
    END LOOP;
  END
  $do$;
`;

export class PersonRulePlans1763702100000 implements MigrationInterface {
  name = 'PersonRulePlans1763702100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(relanguage('plpgsql'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(relanguage('sql'));
  }
}
