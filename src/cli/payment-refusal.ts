import { PaymentError } from '../billing/payment-provider.ts';
import { CliError } from './cli-error.ts';

/** Refusals of the payment rules are the operator's to read, without a stack trace. */
export async function asCliError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PaymentError) throw new CliError(error.message);
    throw error;
  }
}
