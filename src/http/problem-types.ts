/**
 * What each problem `code` means (RFC 9457 §3.1.1: a problem's `type` URI resolves to a
 * page for people; ours is `/problems/<code>`). A code is `<operation>.<reason>`: the page
 * names the operation and explains the reason from this table of reasons, each with the
 * status it comes with and what to do. A code whose reason is not here has no page (404).
 */
export interface ProblemReason {
  status: number
  title: string
  meaning: string
  action: string
}

const invalidField = (field: string, rule: string): ProblemReason => ({
  status: 400,
  title: `Invalid ${field}`,
  meaning: `The ${field} given does not meet the rule: ${rule}.`,
  action: `Correct the ${field} and send the request again; \`detail\` (and \`errors\` where given) says what is wrong.`
})

/** Reasons by name (the part of a code after its operation). */
export const PROBLEM_REASONS: Readonly<Record<string, ProblemReason>> = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    meaning: 'The request does not match what the operation takes: a field is missing, of the wrong type, too long, or unknown.',
    action: 'Look at `errors` (one entry per field) and the operation in the API document (`/docs`), then send a corrected request.'
  },
  invalid_query: {
    status: 400,
    title: 'Invalid query',
    meaning: 'A query parameter is malformed or not one of its allowed values (`sort`, `order`, `status`, `verdict`, a date or a number).',
    action: 'Correct the parameter named in `errors`.'
  },
  invalid_pagination: {
    status: 400,
    title: 'Invalid pagination',
    meaning: '`limit` or `offset` is not a non-negative whole number in range (`limit` 1 or more, larger values lowered to 96).',
    action: 'Send whole numbers.'
  },
  invalid_uuid: { status: 400, title: 'Malformed identifier', meaning: 'A `{uuid}` in the path is not a UUID.', action: 'Use the `uuid` the API gave you.' },
  malformed_body: {
    status: 400,
    title: 'Malformed body',
    meaning: 'The body could not be read: not valid JSON (or form), or not the length its `Content-Length` said.',
    action: 'Send well-formed JSON with `Content-Type: application/json`.'
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    meaning: 'The body is of a type the operation does not take (for instance `text/plain` where JSON is expected).',
    action: 'Send `Content-Type: application/json` (or the form type the operation names).'
  },
  body_too_large: {
    status: 413,
    title: 'Body too large',
    meaning:
      "The body is larger than the operation takes from your plan (a batch request: about 512 bytes and two JSON values per address of the plan's chunk, plus 64 KiB), so it was refused before it was read.",
    action:
      'Send the list in chunks of at most `max_chunk_size` addresses (`GET /api/subscription`): `POST /api/batches` with `final: false`, then `POST /api/batches/{uuid}/emails`.'
  },
  invalid_email: invalidField('email address', 'a deliverable mailbox address (RFC 5321)'),
  invalid_password: {
    status: 400,
    title: 'Password refused',
    meaning:
      "The password does not meet the policy: 8 to 128 characters, not among the most common passwords, not containing the service's names or a part of the address.",
    action: 'Choose a longer, uncommon passphrase.'
  },
  common_password: {
    status: 400,
    title: 'Password too common',
    meaning: 'The password is among the passwords most seen in leaked lists.',
    action: 'Choose a longer, uncommon passphrase.'
  },
  context_password: {
    status: 400,
    title: 'Password too close to the account',
    meaning: "The password contains the service's name or a part of the address.",
    action: 'Choose a passphrase unrelated to the address.'
  },
  invalid_locale: invalidField('locale', "one of the service's languages (`en`, `fr`)"),
  invalid_name: invalidField('name', '1 to 100 characters after trimming'),
  invalid_scopes: invalidField('scopes', 'a non-empty list of known scopes'),
  invalid_checks: invalidField('checks', 'a non-empty list of known checks: syntax, typo, disposable, role, free, dns, smtp, catch_all'),
  invalid_url: invalidField('URL', 'an https URL of a public host'),
  invalid_events: invalidField('events', 'a non-empty list of known event kinds'),
  empty_events: invalidField('events', 'at least one event kind'),
  invalid_description: invalidField('description', 'at most 500 characters'),
  invalid_status: invalidField('status', '`active` or `disabled`'),
  invalid_cursor: {
    status: 400,
    title: 'Malformed cursor',
    meaning: 'The cursor is not one the feed gave.',
    action: 'Start again without a cursor, then follow `next_cursor`.'
  },
  unknown_cursor: {
    status: 400,
    title: 'Unknown cursor',
    meaning: "The cursor names no entry of this account's feed.",
    action: "Use a `next_cursor` or an entry's position from this account's feed."
  },
  invalid_idempotency_key: invalidField('Idempotency-Key', '1 to 255 visible ASCII characters'),
  invalid_event: { status: 400, title: 'Not a Stripe event', meaning: 'The signed body is not a Stripe event object.', action: 'Only Stripe posts here.' },
  invalid_signature: {
    status: 400,
    title: 'Bad signature',
    meaning: "The `Stripe-Signature` does not verify with the endpoint's secret, or is too old.",
    action: 'Only Stripe posts here, signed with the secret of this endpoint.'
  },
  invalid_amount: { status: 400, title: 'Invalid amount', meaning: 'Token amounts are whole positive numbers.', action: 'Send a whole number.' },
  invalid_cycle: invalidField('billing cycle', '`monthly` or `yearly`'),
  invalid_period: invalidField('period end', 'an RFC 3339 date-time'),
  empty: {
    status: 400,
    title: 'Nothing to do',
    meaning: 'The request holds nothing to act on (an empty list, no field to change).',
    action: 'Send at least one address, or one field to change.'
  },
  too_many: {
    status: 400,
    title: 'Too many addresses in one request',
    meaning: "The list holds more addresses than the plan's `max_chunk_size` per request.",
    action: 'Send chunks of at most `max_chunk_size` (`GET /api/subscription`).'
  },
  all_rejected: {
    status: 400,
    title: 'No valid address',
    meaning: 'Not one address of the list has a deliverable syntax.',
    action: 'Check the column you sent: these are not email addresses.'
  },
  reason_required: invalidField('reason', 'a non-empty text, kept for the audit trail'),
  unknown_plan: {
    status: 400,
    title: 'Unknown plan',
    meaning: 'No paid plan of that code is sold (see `GET /api/config`).',
    action: 'Use a plan code of `GET /api/config`.'
  },
  unknown_quantity: {
    status: 400,
    title: 'Unknown top-up',
    meaning: 'No top-up pack of that quantity is sold.',
    action: 'Use a `quantity` of `top_up.packs` in `GET /api/config`.'
  },
  no_setup: {
    status: 400,
    title: 'No two-factor setup',
    meaning: 'Two-factor authentication is not being set up: there is no code to check.',
    action: 'Call `POST /api/users/me/2fa/enable` first.'
  },
  not_enabled: { status: 400, title: 'Two-factor is off', meaning: 'Two-factor authentication is not on for this account.', action: 'Nothing to turn off.' },
  wrong_password: {
    status: 400,
    title: 'Wrong password',
    meaning: "The current password given is wrong. Each wrong password counts towards the account's temporary lock.",
    action: 'Send the current password.'
  },
  already_deleted: { status: 400, title: 'Already deleted', meaning: 'The account is deleted already.', action: 'Nothing to do.' },
  unauthorized: {
    status: 401,
    title: 'Not signed in',
    meaning: 'The request has no credential, or its credential is invalid, expired, revoked, or of a kind this operation does not take.',
    action:
      'Send `Authorization: Bearer` with a valid access token, API key or agent token, as the operation asks; refresh an expired access token with `POST /api/auth/refresh`.'
  },
  invalid_code: {
    status: 401,
    title: 'Wrong code',
    meaning: 'The code is wrong, expired, or was used already.',
    action: 'Use the newest code (or a fresh TOTP code); ask for a new one when it expired.'
  },
  invalid_token: {
    status: 401,
    title: 'Invalid token',
    meaning: 'The token or link is invalid, expired, or was used already.',
    action: 'Start over (sign in, ask for a new link).'
  },
  invalid_credentials: {
    status: 401,
    title: 'Wrong email or password',
    meaning: 'No account matches this email and password (or it is banned or deleted).',
    action: 'Check both, or reset the password.'
  },
  invalid_grant: {
    status: 400,
    title: 'Invalid grant',
    meaning: "The authorization code or refresh token is invalid, expired, used already, or not the client's.",
    action: 'Start the authorization again.'
  },
  insufficient_tokens: {
    status: 402,
    title: 'Not enough tokens',
    meaning: "The wallet holds fewer tokens than the verification reserves (its checks' cost for each address). Nothing was reserved.",
    action: 'Top up (`POST /api/billing/checkout`), ask for fewer checks, or send fewer addresses.'
  },
  missing_scope: {
    status: 403,
    title: 'Missing scope',
    meaning: 'The API key or agent token does not hold the scope this operation needs (the operation names it).',
    action: 'Use a credential with that scope, or create one.'
  },
  forbidden: { status: 403, title: 'Not yours', meaning: 'The resource belongs to another account.', action: 'Act on your own account.' },
  not_owner: { status: 403, title: 'Not yours', meaning: 'The session belongs to another account.', action: 'End your own sessions only.' },
  limit_reached: {
    status: 403,
    title: 'Plan limit reached',
    meaning: 'The plan allows no more of these (keys, agents or webhook endpoints; revoked ones do not count).',
    action: 'Revoke one you no longer use, or move to a larger plan.'
  },
  check_not_allowed: {
    status: 403,
    title: 'Check not in the plan',
    meaning: 'The plan does not include a check asked for.',
    action: "Ask for the plan's checks (`GET /api/config`), or move to a plan that has it."
  },
  check_not_enabled: {
    status: 403,
    title: 'Check not enabled on the key',
    meaning: 'The API key does not enable a check asked for.',
    action: 'Enable the check on the key (`PATCH /api/keys/{uuid}`) or leave it out.'
  },
  check_not_held: {
    status: 403,
    title: 'Check not held',
    meaning: 'A credential cannot enable a check it does not hold itself.',
    action: "Make the change with a credential that holds it (a session holds all of the plan's)."
  },
  scope_not_held: {
    status: 403,
    title: 'Scope not held',
    meaning: 'A credential cannot grant a scope it does not hold itself.',
    action: 'Make the change with a credential that holds it.'
  },
  scope_not_allowed: {
    status: 403,
    title: 'Scope not in the plan',
    meaning: 'The plan does not allow agents this scope (`agent_scopes` in `GET /api/config`).',
    action: 'Leave the scope out, or move to a larger plan.'
  },
  environment_not_held: {
    status: 403,
    title: 'Other environment',
    meaning: 'A test credential (`svc_test_…`) works in the sandbox only: it cannot create, change or revoke a live key.',
    action: 'Use a live credential (a session or a live key).'
  },
  environment_mismatch: {
    status: 403,
    title: 'Other environment',
    meaning:
      'A batch takes chunks from credentials of its own environment only: a test key cannot add to a live batch (it would be billed and probed live), nor a live one to a sandbox batch.',
    action: 'Add to the batch with a credential of its environment.'
  },
  max_batch_size: {
    status: 403,
    title: 'Batch too large for the plan',
    meaning: "The batch would hold more unique valid addresses than the plan's `max_batch_size`.",
    action: 'Start another batch, or move to a larger plan.'
  },
  revoked: { status: 403, title: 'Revoked', meaning: 'A revoked key cannot be changed.', action: 'Create a new key.' },
  unconfirmed: {
    status: 403,
    title: 'Email not confirmed',
    meaning: 'The password is right but the address was never confirmed.',
    action: 'Enter the mailed code (`POST /api/auth/confirm`), or ask for a new one (`POST /api/auth/resend-confirmation`).'
  },
  second_factor_required: {
    status: 400,
    title: 'Second factor needed',
    meaning: 'With two-factor on, this change needs a `code` too.',
    action: 'Send a TOTP or backup code in `code`.'
  },
  not_found: {
    status: 404,
    title: 'Not found',
    meaning: "No such resource — or it is another account's, which is the same to you.",
    action: 'Check the identifier.'
  },
  no_account: { status: 404, title: 'No such account', meaning: 'No account matches.', action: 'Check the address or the link.' },
  no_billing_account: {
    status: 404,
    title: 'No billing account yet',
    meaning: 'The account has never checked out, so it has no billing portal.',
    action: 'Subscribe or buy tokens first (`POST /api/billing/checkout`).'
  },
  already_subscribed: {
    status: 409,
    title: 'Already subscribed',
    meaning: 'The account holds a paid plan.',
    action: 'Change or cancel it in the billing portal (`POST /api/billing/portal`).'
  },
  already_enabled: {
    status: 409,
    title: 'Already on',
    meaning: 'Two-factor authentication is on already.',
    action: 'Nothing to do; turn it off first to set it up again.'
  },
  already_registered: {
    status: 409,
    title: 'Already registered',
    meaning: 'The address already belongs to an account.',
    action: 'Sign in, or reset the password.'
  },
  email_taken: { status: 409, title: 'Address taken', meaning: 'Another account holds that address.', action: 'Use another address.' },
  intake_closed: {
    status: 409,
    title: 'Intake closed',
    meaning: 'The batch takes no more chunks: a chunk with `final: true` closed it, or it was idle too long, or it is completed.',
    action: 'Start a new batch.'
  },
  changed: {
    status: 409,
    title: 'Changed meanwhile',
    meaning: 'The batch changed while this chunk was decided.',
    action: 'Send the chunk again (addresses it holds already are not charged twice).'
  },
  exists: { status: 409, title: 'Exists already', meaning: 'That resource exists already.', action: 'Nothing to do.' },
  code_exists: { status: 409, title: 'Exists already', meaning: 'That authorization code exists already.', action: 'Start the authorization again.' },
  concurrent_update: {
    status: 409,
    title: 'Changed at the same time',
    meaning: 'Another request changed the same resource at the same moment; nothing was changed by this one.',
    action: 'Send it again (after `Retry-After`).'
  },
  account_deleted: {
    status: 410,
    title: 'Account deleted',
    meaning: 'The account was deleted while this request ran: what it made is erased with the account.',
    action: 'Nothing to do; the account is gone.'
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency-Key reused',
    meaning: 'This `Idempotency-Key` was used for a different request within its lifetime.',
    action: 'Use a new key for a new request; send the same request to get the original answer.'
  },
  locked: {
    status: 429,
    title: 'Temporarily locked',
    meaning: 'Too many wrong passwords or codes in a row: the account (or this step) is locked for a while (15 minutes).',
    action: 'Wait (see `Retry-After`), or reset the password by mail, which lifts the lock.'
  },
  too_many_requests: {
    status: 429,
    title: 'Too many requests',
    meaning: 'Too many of these from this client in a short time.',
    action: 'Wait `Retry-After` seconds.'
  },
  exceeded: {
    status: 429,
    title: 'Rate limit reached',
    meaning: 'The credential (or, for public reads, the client address) made more requests this minute than its plan allows; see the `RateLimit-*` headers.',
    action: 'Wait `Retry-After` seconds; spread requests out, or move to a larger plan.'
  },
  not_ready: {
    status: 503,
    title: 'Accepted, not readable yet',
    meaning: 'The write was accepted, but the read models were late to show it.',
    action: 'Read it again in a moment.'
  },
  unavailable: {
    status: 503,
    title: 'Billing unavailable',
    meaning: 'Billing is not configured on this service, or Stripe did not answer.',
    action: 'Try again later, or contact the operator.'
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not offered',
    meaning: 'This MCP endpoint is stateless: it answers POST only.',
    action: 'POST JSON-RPC messages.'
  },
  disposable_email: {
    status: 400,
    title: 'Disposable address',
    meaning: 'Sign-up takes lasting addresses only: this one belongs to a disposable mailbox provider.',
    action: 'Sign up with an address you keep.'
  },
  too_large: {
    status: 413,
    title: 'File too large',
    meaning: 'The list file is larger than a kept file may be on your plan (2 KiB for each address a batch may hold, at least 4 MiB).',
    action: 'Keep fewer columns, or split the list.'
  },
  unsupported_file: {
    status: 415,
    title: 'Not a list file',
    meaning: 'The file is not CSV, TSV, text or XLSX (an Excel 97–2003 `.xls`, say), or it is empty.',
    action: 'Save it as CSV or XLSX and send it again.'
  },
  upload_failed: {
    status: 400,
    title: 'Upload broken off',
    meaning: 'The file did not arrive whole (the connection closed before its end); nothing was kept.',
    action: 'Send it again.'
  },
  gone: {
    status: 410,
    title: 'No longer kept',
    meaning: "The list file was removed (its retention ended, or the account's data was erased).",
    action: 'The results are still in the batch: `GET /api/batches/{uuid}/results`.'
  },
  undeliverable_email: {
    status: 400,
    title: 'Undeliverable address',
    meaning: 'Mail to this address would not arrive (its domain or mailbox does not exist), so the confirmation code could not reach it.',
    action: 'Check the address.'
  }
}

/** Codes that are not `<operation>.<reason>`: the catch-all errors. */
const WHOLE: Readonly<Record<string, ProblemReason>> = {
  internal_error: {
    status: 500,
    title: 'Unexpected error',
    meaning: 'Something went wrong on our side; it was logged, nothing of the request is half-done that a retry would repeat.',
    action: 'Try again; if it persists, tell the operator (with the time of the request).'
  }
}

/** What a problem code means, or null when it is not a code this service answers. */
export function problemType(code: string): (ProblemReason & { code: string; operation: string | null }) | null {
  if (WHOLE[code]) return { ...WHOLE[code], code, operation: null }
  const m = /^([a-z][a-z0-9_]{0,60})\.([a-z][a-z0-9_]{0,60})$/.exec(code)
  if (!m) return null
  const reason = PROBLEM_REASONS[m[2]]
  return reason
    ? { ...reason, code, operation: m[1] === 'request' || m[1] === 'route' ? null : m[1].replaceAll('_', ' ') }
    : m[1] === 'route' && m[2] === 'not_found'
      ? {
          status: 404,
          title: 'No such route',
          meaning: 'No operation answers at this method and path.',
          action: 'See the API document (`/docs`).',
          code,
          operation: null
        }
      : null
}
