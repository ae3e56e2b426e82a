import type { Locale } from '../domain/locales.ts'

/** Transactional mail texts per locale (the account's locale; English when unknown). */
const CONFIRMATION: Readonly<Record<Locale, (code: string, minutes: number) => { subject: string, text: string }>> = {
  en: (code, minutes) => ({
    subject: `Your confirmation code: ${code}`,
    text: `Welcome!\n\nYour confirmation code is ${code}.\nIt expires in ${minutes} minutes.\n\nIf you did not sign up, ignore this message.\n`
  }),
  fr: (code, minutes) => ({
    subject: `Votre code de confirmation : ${code}`,
    text: `Bienvenue !\n\nVotre code de confirmation est ${code}.\nIl expire dans ${minutes} minutes.\n\nSi vous n'êtes pas à l'origine de cette inscription, ignorez ce message.\n`
  })
}

export function confirmationMail (locale: string, code: string, minutes: number): { subject: string, text: string } {
  return (CONFIRMATION[locale as Locale] ?? CONFIRMATION.en)(code, minutes)
}
