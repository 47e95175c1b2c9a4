/** Paths of the site's pages that mail and Stripe send customers back to (under PUBLIC_BASE_URL): the services build links with them, the website serves them. */
export const RESET_PASSWORD_PATH = '/reset-password';
export const BILLING_PATH = '/account/billing';
export const WEBHOOK_PATH = '/account/webhook';
