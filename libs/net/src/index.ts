export { ALLOWLIST_SETTING, OutboundAllowlistError } from './address-allowlist';
export { AddressPolicy, hostRefusalReason, type AddressRefusal, type AddressVerdict, type RefusedAddressKind } from './address-policy';
export { isIpLiteral, normalizeHost } from './ip-literal';
export { guardedConnector, guardedLookup, type GuardedConnectionOptions } from './guarded-connection';
export { resolveAllowedAddresses, resolveWithin, systemResolver, type HostResolver, type ResolvedAddress } from './host-resolution';
export {
  OutboundRequestRefused,
  OutboundTimeoutError,
  ResponseTooLargeError,
  outboundRefusalOf,
  type OutboundRefusalCode,
  type OutboundRefusalDetails,
} from './outbound-errors';
export { DEFAULT_CONNECT_TIMEOUT_MS, OutboundGuard, type GuardedFetchInit, type GuardedRequestInit, type OutboundGuardOptions } from './outbound-guard';
export { ResponseHeaders, type OutboundResponse } from './outbound-response';
export {
  DEFAULT_SAVE_TIME_RESOLVE_TIMEOUT_MS,
  checkOutboundUrl,
  checkOutboundUrlResolved,
  type OutboundUrlCheck,
  type OutboundUrlKind,
  type OutboundUrlRuleOptions,
  type ResolvedUrlRuleOptions,
} from './outbound-url-rule';
export { capBodyStream, capResponseBody, readBodyCapped, type BodySource } from './response-body-cap';
