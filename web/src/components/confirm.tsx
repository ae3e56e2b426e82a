import type { ReactNode } from 'react'
import { Button, Dialog, DialogTrigger, Heading, Modal } from 'react-aria-components'
import { useI18n } from '../i18n.tsx'

/** A confirmation before something that cannot be undone. */
export function Confirm({
  label,
  title,
  body,
  onConfirm,
  danger = true
}: {
  label: string
  title: string
  body: string
  onConfirm: () => Promise<void>
  danger?: boolean
}): ReactNode {
  const { t } = useI18n()
  return (
    <DialogTrigger>
      <Button className={`react-aria-Button ${danger ? 'danger' : 'secondary'}`}>{label}</Button>
      <Modal isDismissable>
        <Dialog role="alertdialog">
          {({ close }) => (
            <>
              <Heading slot="title">{title}</Heading>
              <p>{body}</p>
              <div className="row">
                <Button
                  className="react-aria-Button danger"
                  onPress={() => {
                    void onConfirm().then(close)
                  }}
                >
                  {label}
                </Button>
                <Button className="react-aria-Button secondary" onPress={close}>
                  {t('action.cancel')}
                </Button>
              </div>
            </>
          )}
        </Dialog>
      </Modal>
    </DialogTrigger>
  )
}
