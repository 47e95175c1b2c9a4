import type { ReportLanguage } from '../domain/report-language.ts';

/**
 * The words of the customer's billing mail, per language. `{name}` slots are filled by
 * billing-mail.ts with amounts and dates already formatted in the language's conventions. A
 * language without a catalogue here gets English mail (docs/mail.md).
 */
export interface BillingMailWords {
  hello: string;
  signature: string;
  /** "{plan} plan, {cycle}" */
  planCycle: string;
  monthly: string;
  annual: string;
  invoiceSubject: string;
  invoiceIssued: string;
  invoicePayManual: string;
  invoicePayCard: string;
  invoiceLink: string;
  receiptSubject: string;
  receiptBody: string;
  quotaNearSubject: string;
  quotaNearBody: string;
  quotaFullSubject: string;
  quotaFullBody: string;
  quotaMore: string;
  planEndingSubject: string;
  planEndingBody: string;
  planEndedSubject: string;
  planEndedBody: string;
  planRenew: string;
  planChoose: string;
}

const en: BillingMailWords = {
  hello: 'Hello,',
  signature: 'vinhistory',
  planCycle: '{plan} plan, billed {cycle}',
  monthly: 'monthly',
  annual: 'annually',
  invoiceSubject: 'Invoice {reference}: {amount}',
  invoiceIssued: 'We have issued invoice {reference} for the {plan}: {amount}.',
  invoicePayManual: 'Please pay it by bank transfer by {due}, quoting the reference {reference}.',
  invoicePayCard: 'It is charged to your card; please pay it by {due}.',
  invoiceLink: 'The invoice, and how to pay it:',
  receiptSubject: 'Payment received for invoice {reference}',
  receiptBody: 'Thank you: we received {amount} for invoice {reference} ({plan}) on {date}.',
  quotaNearSubject: 'You have used 80% of this month’s searches',
  quotaNearBody: 'You have used {used} of the {quota} searches of your {plan} plan in this billing period. The count starts again on {reset}.',
  quotaFullSubject: 'You have used all of this month’s searches',
  quotaFullBody:
    'You have used all {quota} searches of your {plan} plan in this billing period. Further searches are refused (429) until the count starts again on {reset}.',
  quotaMore: 'To search more, choose a larger plan:',
  planEndingSubject: 'Your {plan} plan ends on {date}',
  planEndingBody: 'Your {plan} plan ends on {date}. After that, searches with your tokens are refused (402) until a plan is in force again.',
  planEndedSubject: 'Your {plan} plan has ended',
  planEndedBody: 'Your {plan} plan ended on {date}. Searches with your tokens are refused (402) until you choose a plan.',
  planRenew: 'To keep searching, renew it on your billing page:',
  planChoose: 'Choose a plan on your billing page:',
};

const es: BillingMailWords = {
  hello: 'Hola:',
  signature: 'vinhistory',
  planCycle: 'plan {plan}, facturación {cycle}',
  monthly: 'mensual',
  annual: 'anual',
  invoiceSubject: 'Factura {reference}: {amount}',
  invoiceIssued: 'Hemos emitido la factura {reference} del {plan}: {amount}.',
  invoicePayManual: 'Páguela por transferencia bancaria antes del {due}, indicando la referencia {reference}.',
  invoicePayCard: 'Se cobra en su tarjeta; páguela antes del {due}.',
  invoiceLink: 'La factura y cómo pagarla:',
  receiptSubject: 'Pago recibido de la factura {reference}',
  receiptBody: 'Gracias: hemos recibido {amount} por la factura {reference} ({plan}) el {date}.',
  quotaNearSubject: 'Ha usado el 80 % de las búsquedas de este mes',
  quotaNearBody: 'Ha usado {used} de las {quota} búsquedas de su plan {plan} en este periodo de facturación. El contador se reinicia el {reset}.',
  quotaFullSubject: 'Ha usado todas las búsquedas de este mes',
  quotaFullBody:
    'Ha usado las {quota} búsquedas de su plan {plan} en este periodo de facturación. Las siguientes búsquedas se rechazan (429) hasta que el contador se reinicie el {reset}.',
  quotaMore: 'Para buscar más, elija un plan mayor:',
  planEndingSubject: 'Su plan {plan} termina el {date}',
  planEndingBody: 'Su plan {plan} termina el {date}. Después, las búsquedas con sus tokens se rechazan (402) hasta que vuelva a tener un plan en vigor.',
  planEndedSubject: 'Su plan {plan} ha terminado',
  planEndedBody: 'Su plan {plan} terminó el {date}. Las búsquedas con sus tokens se rechazan (402) hasta que elija un plan.',
  planRenew: 'Para seguir buscando, renuévelo en su página de facturación:',
  planChoose: 'Elija un plan en su página de facturación:',
};

const pl: BillingMailWords = {
  hello: 'Dzień dobry,',
  signature: 'vinhistory',
  planCycle: 'plan {plan}, rozliczenie {cycle}',
  monthly: 'miesięczne',
  annual: 'roczne',
  invoiceSubject: 'Faktura {reference}: {amount}',
  invoiceIssued: 'Wystawiliśmy fakturę {reference} za {plan}: {amount}.',
  invoicePayManual: 'Prosimy o przelew do {due} z tytułem {reference}.',
  invoicePayCard: 'Kwota zostanie pobrana z karty; termin płatności: {due}.',
  invoiceLink: 'Faktura i sposób płatności:',
  receiptSubject: 'Otrzymaliśmy płatność za fakturę {reference}',
  receiptBody: 'Dziękujemy: {date} otrzymaliśmy {amount} za fakturę {reference} ({plan}).',
  quotaNearSubject: 'Wykorzystano 80% wyszukiwań w tym miesiącu',
  quotaNearBody: 'Wykorzystano {used} z {quota} wyszukiwań planu {plan} w tym okresie rozliczeniowym. Licznik zeruje się {reset}.',
  quotaFullSubject: 'Wykorzystano wszystkie wyszukiwania w tym miesiącu',
  quotaFullBody:
    'Wykorzystano wszystkie {quota} wyszukiwań planu {plan} w tym okresie rozliczeniowym. Kolejne wyszukiwania są odrzucane (429) do wyzerowania licznika {reset}.',
  quotaMore: 'Aby wyszukiwać więcej, wybierz większy plan:',
  planEndingSubject: 'Plan {plan} kończy się {date}',
  planEndingBody: 'Plan {plan} kończy się {date}. Potem wyszukiwania Twoimi tokenami są odrzucane (402), dopóki plan znów nie będzie aktywny.',
  planEndedSubject: 'Plan {plan} się zakończył',
  planEndedBody: 'Plan {plan} zakończył się {date}. Wyszukiwania Twoimi tokenami są odrzucane (402), dopóki nie wybierzesz planu.',
  planRenew: 'Aby dalej wyszukiwać, odnów go na stronie rozliczeń:',
  planChoose: 'Wybierz plan na stronie rozliczeń:',
};

const ru: BillingMailWords = {
  hello: 'Здравствуйте!',
  signature: 'vinhistory',
  planCycle: 'тариф {plan}, оплата {cycle}',
  monthly: 'помесячно',
  annual: 'за год',
  invoiceSubject: 'Счёт {reference}: {amount}',
  invoiceIssued: 'Мы выставили счёт {reference} за {plan}: {amount}.',
  invoicePayManual: 'Пожалуйста, оплатите его банковским переводом до {due}, указав номер {reference}.',
  invoicePayCard: 'Сумма будет списана с карты; срок оплаты — {due}.',
  invoiceLink: 'Счёт и способы оплаты:',
  receiptSubject: 'Оплата по счёту {reference} получена',
  receiptBody: 'Спасибо: {date} мы получили {amount} по счёту {reference} ({plan}).',
  quotaNearSubject: 'Использовано 80% поисков этого месяца',
  quotaNearBody: 'Использовано {used} из {quota} поисков тарифа {plan} в этом расчётном периоде. Счётчик обнулится {reset}.',
  quotaFullSubject: 'Все поиски этого месяца использованы',
  quotaFullBody:
    'Использованы все {quota} поисков тарифа {plan} в этом расчётном периоде. Новые поиски отклоняются (429), пока счётчик не обнулится {reset}.',
  quotaMore: 'Чтобы искать больше, выберите тариф побольше:',
  planEndingSubject: 'Тариф {plan} заканчивается {date}',
  planEndingBody: 'Тариф {plan} заканчивается {date}. После этого поиски с вашими токенами отклоняются (402), пока тариф снова не будет действовать.',
  planEndedSubject: 'Тариф {plan} закончился',
  planEndedBody: 'Тариф {plan} закончился {date}. Поиски с вашими токенами отклоняются (402), пока вы не выберете тариф.',
  planRenew: 'Чтобы продолжить поиски, продлите его на странице оплаты:',
  planChoose: 'Выберите тариф на странице оплаты:',
};

const uk: BillingMailWords = {
  hello: 'Вітаємо!',
  signature: 'vinhistory',
  planCycle: 'тариф {plan}, оплата {cycle}',
  monthly: 'щомісяця',
  annual: 'за рік',
  invoiceSubject: 'Рахунок {reference}: {amount}',
  invoiceIssued: 'Ми виставили рахунок {reference} за {plan}: {amount}.',
  invoicePayManual: 'Будь ласка, сплатіть його банківським переказом до {due}, вказавши номер {reference}.',
  invoicePayCard: 'Суму буде списано з картки; термін оплати — {due}.',
  invoiceLink: 'Рахунок і способи оплати:',
  receiptSubject: 'Оплату за рахунком {reference} отримано',
  receiptBody: 'Дякуємо: {date} ми отримали {amount} за рахунком {reference} ({plan}).',
  quotaNearSubject: 'Використано 80% пошуків цього місяця',
  quotaNearBody: 'Використано {used} з {quota} пошуків тарифу {plan} у цьому розрахунковому періоді. Лічильник обнулиться {reset}.',
  quotaFullSubject: 'Усі пошуки цього місяця використано',
  quotaFullBody:
    'Використано всі {quota} пошуків тарифу {plan} у цьому розрахунковому періоді. Нові пошуки відхиляються (429), доки лічильник не обнулиться {reset}.',
  quotaMore: 'Щоб шукати більше, оберіть більший тариф:',
  planEndingSubject: 'Тариф {plan} закінчується {date}',
  planEndingBody: 'Тариф {plan} закінчується {date}. Після цього пошуки з вашими токенами відхиляються (402), доки тариф знову не діятиме.',
  planEndedSubject: 'Тариф {plan} закінчився',
  planEndedBody: 'Тариф {plan} закінчився {date}. Пошуки з вашими токенами відхиляються (402), доки ви не оберете тариф.',
  planRenew: 'Щоб і далі шукати, продовжте його на сторінці оплати:',
  planChoose: 'Оберіть тариф на сторінці оплати:',
};

export const BILLING_MAIL_CATALOGUES: Partial<Record<ReportLanguage, BillingMailWords>> = { en, es, pl, ru, uk };
