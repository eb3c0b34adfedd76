/*
 * A supplied registered agent (ORD-RA-3, ORD-RA-6): the agent a company keeps instead of ordering our service.
 * Every field is optional; what is given is validated, what is missing is accepted and shown to the filing team.
 */

type Obj = Record<string, unknown>;

const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

/** One 400 field error (`field` is the full dotted path). */
interface AgentFieldError {
  field: string;
  message: string;
}

/**
 * ORD-RA-3, ORD-RA-6: what a supplied agent gives that contradicts itself or the request: a name field its `type`
 * does not use (companyName on a PERSON, firstName/lastName on a COMPANY) and an `addressState` other than the
 * request's filingState. Missing fields are not errors (see {@link missingAgentDetails}).
 * @param prefix the agent's path, e.g. 'formation.registeredAgent.'.
 * @returns field errors with the full path; empty when what is given is consistent.
 */
export function suppliedAgentErrors(agent: Obj, prefix: string, filingState: unknown): AgentFieldError[] {
  const errors: AgentFieldError[] = [];
  const add = (f: string, m: string) => errors.push({ field: `${prefix}${f}`, message: m });
  if (agent.type === 'PERSON' && isSet(agent.companyName))
    add('companyName', 'is not allowed for a PERSON agent (supplied registered agent)');
  if (agent.type === 'COMPANY') {
    if (isSet(agent.firstName)) add('firstName', 'is not allowed for a COMPANY agent (supplied registered agent)');
    if (isSet(agent.lastName)) add('lastName', 'is not allowed for a COMPANY agent (supplied registered agent)');
  }
  if (typeof agent.addressState === 'string' && typeof filingState === 'string' && agent.addressState !== filingState) {
    add(
      'addressState',
      `must equal filingState (${filingState}): a registered agent must be in the filing state (registeredAgent rule 3)`,
    );
  }
  return errors;
}

/**
 * ORD-RA-6: the details a supplied agent lacks for a filing, by field name, in a fixed order: `type`, the names its
 * type needs (`firstName`, `lastName` for PERSON, `companyName` for COMPANY; `name` when there is no type and no
 * name at all), `addressStreet`, `addressCity`, `addressState`, `addressZip`. Empty when the agent is complete.
 * The console shows the list on the order page so the filing team can ask for the details (exception 469).
 */
export function missingAgentDetails(agent: Obj): string[] {
  const missing: string[] = [];
  if (!isSet(agent.type)) missing.push('type');
  if (agent.type === 'PERSON') {
    if (!isSet(agent.firstName)) missing.push('firstName');
    if (!isSet(agent.lastName)) missing.push('lastName');
  } else if (agent.type === 'COMPANY') {
    if (!isSet(agent.companyName)) missing.push('companyName');
  } else if (!isSet(agent.companyName) && !isSet(agent.firstName) && !isSet(agent.lastName)) {
    missing.push('name');
  }
  for (const f of ['addressStreet', 'addressCity', 'addressState', 'addressZip']) if (!isSet(agent[f])) missing.push(f);
  return missing;
}
