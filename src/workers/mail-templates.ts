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

const RESET: Readonly<Record<Locale, (link: string, minutes: number) => { subject: string, text: string }>> = {
  en: (link, minutes) => ({
    subject: 'Reset your password',
    text: `Someone asked to reset the password of your account.\n\nTo choose a new one, open this link within ${minutes} minutes:\n${link}\n\nIf it was not you, ignore this message: your password stays as it is.\n`
  }),
  fr: (link, minutes) => ({
    subject: 'Réinitialisez votre mot de passe',
    text: `Une réinitialisation du mot de passe de votre compte a été demandée.\n\nPour en choisir un nouveau, ouvrez ce lien dans les ${minutes} minutes :\n${link}\n\nSi vous n'êtes pas à l'origine de cette demande, ignorez ce message.\n`
  })
}

export function resetMail (locale: string, link: string, minutes: number): { subject: string, text: string } {
  return (RESET[locale as Locale] ?? RESET.en)(link, minutes)
}

const EMAIL_CHANGE: Readonly<Record<Locale, (link: string) => { subject: string, text: string }>> = {
  en: link => ({ subject: 'Confirm your new email address', text: `To make this address the one of your account, open this link within 24 hours:\n${link}\n\nIf you did not ask for this, ignore this message.\n` }),
  fr: link => ({ subject: 'Confirmez votre nouvelle adresse', text: `Pour faire de cette adresse celle de votre compte, ouvrez ce lien dans les 24 heures :\n${link}\n\nSi vous n'avez rien demandé, ignorez ce message.\n` })
}

export function emailChangeMail (locale: string, link: string): { subject: string, text: string } {
  return (EMAIL_CHANGE[locale as Locale] ?? EMAIL_CHANGE.en)(link)
}
