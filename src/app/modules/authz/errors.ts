/**
 * x/authz errors, codespace `authz` (cosmos/cosmos-sdk:x/authz/errors.go). Codes 8, 10 and 11 are not registered upstream on the 0.50–0.55 line either.
 */
import { registerError } from '../../errors.js';

export const AUTHZ_CODESPACE = 'authz';

export const authzErrors = {
  noAuthorizationFound: registerError(AUTHZ_CODESPACE, 2, 'authorization not found'),
  invalidExpirationTime: registerError(AUTHZ_CODESPACE, 3, 'expiration time of authorization should be more than current time'),
  unknownAuthorizationType: registerError(AUTHZ_CODESPACE, 4, 'unknown authorization type'),
  noGrantKeyFound: registerError(AUTHZ_CODESPACE, 5, 'grant key not found'),
  authorizationExpired: registerError(AUTHZ_CODESPACE, 6, 'authorization expired'),
  granteeIsGranter: registerError(AUTHZ_CODESPACE, 7, 'grantee and granter should be different'),
  authorizationNumOfSigners: registerError(AUTHZ_CODESPACE, 9, 'authorization can be given to msg with only one signer'),
  negativeMaxTokens: registerError(AUTHZ_CODESPACE, 12, 'max tokens should be positive'),
} as const;
