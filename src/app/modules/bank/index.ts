/** x/bank: see module.ts (routes, queries, genesis), keeper.ts (state logic), keys.ts (layout). */
export { BankModule, DEFAULT_BANK_NAMES, type BankModuleOptions, type BankNames } from './module.js';
export { BankKeeper, type AccountHooks, type BankKeeperOptions, type ModulePermission } from './keeper.js';
export * from './keys.js';
export * from './types.js';
