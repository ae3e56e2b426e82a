import type { Locale } from '../domain/locales.ts'

/** Transactional mail texts per locale (the account's locale; English when unknown). */
const CONFIRMATION: Readonly<Record<Locale, (code: string, minutes: number) => { subject: string; text: string }>> = {
  en: (code, minutes) => ({
    subject: 'Your confirmation code',
    text: `Welcome!\n\nYour confirmation code is ${code}.\nIt expires in ${minutes} minutes.\n\nIf you did not sign up, ignore this message.\n`
  }),
  fr: (code, minutes) => ({
    subject: 'Votre code de confirmation',
    text: `Bienvenue !\n\nVotre code de confirmation est ${code}.\nIl expire dans ${minutes} minutes.\n\nSi vous n'êtes pas à l'origine de cette inscription, ignorez ce message.\n`
  })
}

export function confirmationMail(locale: string, code: string, minutes: number): { subject: string; text: string } {
  return (CONFIRMATION[locale as Locale] ?? CONFIRMATION.en)(code, minutes)
}

const RESET: Readonly<Record<Locale, (link: string, minutes: number) => { subject: string; text: string }>> = {
  en: (link, minutes) => ({
    subject: 'Reset your password',
    text: `Someone asked to reset the password of your account.\n\nTo choose a new one, open this link within ${minutes} minutes:\n${link}\n\nIf it was not you, ignore this message: your password stays as it is.\n`
  }),
  fr: (link, minutes) => ({
    subject: 'Réinitialisez votre mot de passe',
    text: `Une réinitialisation du mot de passe de votre compte a été demandée.\n\nPour en choisir un nouveau, ouvrez ce lien dans les ${minutes} minutes :\n${link}\n\nSi vous n'êtes pas à l'origine de cette demande, ignorez ce message.\n`
  })
}

export function resetMail(locale: string, link: string, minutes: number): { subject: string; text: string } {
  return (RESET[locale as Locale] ?? RESET.en)(link, minutes)
}

const EMAIL_CHANGE: Readonly<Record<Locale, (link: string) => { subject: string; text: string }>> = {
  en: link => ({
    subject: 'Confirm your new email address',
    text: `To make this address the one of your account, open this link within 24 hours:\n${link}\n\nIf you did not ask for this, ignore this message.\n`
  }),
  fr: link => ({
    subject: 'Confirmez votre nouvelle adresse',
    text: `Pour faire de cette adresse celle de votre compte, ouvrez ce lien dans les 24 heures :\n${link}\n\nSi vous n'avez rien demandé, ignorez ce message.\n`
  })
}

export function emailChangeMail(locale: string, link: string): { subject: string; text: string } {
  return (EMAIL_CHANGE[locale as Locale] ?? EMAIL_CHANGE.en)(link)
}

const PASSWORD_CHANGED: Readonly<Record<Locale, (how: 'change' | 'reset') => { subject: string; text: string }>> = {
  en: how => ({
    subject: 'Your password was changed',
    text: `The password of your account was ${how === 'reset' ? 'reset with a link sent to this address' : 'changed'}. Other sessions were signed out and any pending change of address was cancelled.\n\nIf this was not you, reset your password now and contact us.\n`
  }),
  fr: how => ({
    subject: 'Votre mot de passe a été modifié',
    text: `Le mot de passe de votre compte a été ${how === 'reset' ? 'réinitialisé par un lien envoyé à cette adresse' : 'modifié'}. Les autres sessions ont été fermées et tout changement d'adresse en attente a été annulé.\n\nSi ce n'était pas vous, réinitialisez votre mot de passe maintenant et contactez-nous.\n`
  })
}

/** Told to the account's address when its password changes (ASVS 5.0 V6.3.7: users are notified of changes to authentication details). */
export function passwordChangedMail(locale: string, how: 'change' | 'reset'): { subject: string; text: string } {
  return (PASSWORD_CHANGED[locale as Locale] ?? PASSWORD_CHANGED.en)(how)
}

const EMAIL_CHANGED: Readonly<Record<Locale, (to: string) => { subject: string; text: string }>> = {
  en: to => ({
    subject: 'The address of your account was changed',
    text: `The address of your account is now ${to}; mail will no longer come here.\n\nIf this was not you, contact us at once.\n`
  }),
  fr: to => ({
    subject: "L'adresse de votre compte a été modifiée",
    text: `L'adresse de votre compte est désormais ${to} ; les messages ne viendront plus ici.\n\nSi ce n'était pas vous, contactez-nous immédiatement.\n`
  })
}

/** Told to the old address when the account's address changes (ASVS 5.0 V6.3.7). */
export function emailChangedMail(locale: string, to: string): { subject: string; text: string } {
  return (EMAIL_CHANGED[locale as Locale] ?? EMAIL_CHANGED.en)(to)
}

const TWO_FACTOR: Readonly<Record<Locale, (on: boolean) => { subject: string; text: string }>> = {
  en: on => ({
    subject: on ? 'Two-factor authentication was turned on' : 'Two-factor authentication was turned off',
    text: `Two-factor authentication was turned ${on ? 'on' : 'off'} for your account.\n\nIf this was not you, reset your password now and contact us.\n`
  }),
  fr: on => ({
    subject: on ? 'La double authentification a été activée' : 'La double authentification a été désactivée',
    text: `La double authentification a été ${on ? 'activée' : 'désactivée'} sur votre compte.\n\nSi ce n'était pas vous, réinitialisez votre mot de passe maintenant et contactez-nous.\n`
  })
}

/** Told to the account when two-factor authentication is turned on or off (ASVS 5.0 V6.3.7). */
export function twoFactorMail(locale: string, on: boolean): { subject: string; text: string } {
  return (TWO_FACTOR[locale as Locale] ?? TWO_FACTOR.en)(on)
}
