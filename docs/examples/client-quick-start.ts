// The quick start of docs/client.md, type-checked against the published declarations (`lanegate/client` through
// package.json exports) by `tsc -p docs/examples` in `npm test`. Not run.
import { LanegateClient, isLanegateError, type LanegateErrorCode, type PaymentIntent } from 'lanegate/client'

export async function quickStart (): Promise<PaymentIntent | LanegateErrorCode> {
  const lanegate = new LanegateClient({
    baseUrl: 'https://gateway.example',
    clientId: 'demo-checkout',
    clientSecret: process.env.LANEGATE_CLIENT_SECRET ?? '',
  })
  const intent = await lanegate.payments.createIntent({ amount: 1250, currency: 'usd', organization_id: 'org_store_001' })
  try {
    return await lanegate.payments.cancelIntent(intent.id, { cancellationReason: 'requested_by_customer' })
  } catch (err) {
    if (isLanegateError(err, 'payment_intent_not_cancelable')) {
      const code: 'payment_intent_not_cancelable' = err.code
      return code
    }
    throw err
  }
}
