#!/usr/bin/env bash
# Installs the real mail servers of the engine's end-to-end suite (test/verifier/real-servers.test.ts)
# from Debian's packages, without starting any of them (the suite starts its own, each in a
# network namespace it makes, never on this machine's port 25):
#   - Postfix, postgrey and NSD with apt (a policy-rc.d answering 101 while apt runs keeps
#     their services from starting; Postfix is configured as "No configuration");
#   - OpenSMTPD and Exim, which conflict with Postfix in apt: their packages are downloaded
#     and unpacked with `dpkg-deb -x` under /opt/mail-servers/<name>, their libraries
#     installed with apt, and the system users OpenSMTPD drops privileges to are made.
# Needs root. Idempotent: a second run changes nothing. Exits non-zero when anything is missing after it.
set -euo pipefail
prefix=/opt/mail-servers
export DEBIAN_FRONTEND=noninteractive

need_apt=()
for bin in /usr/sbin/postfix /usr/sbin/postgrey /usr/sbin/nsd; do [ -x "$bin" ] || need_apt+=("$bin"); done
if [ ${#need_apt[@]} -gt 0 ] || [ ! -x $prefix/opensmtpd/usr/sbin/smtpd ] || [ ! -x $prefix/exim4/usr/sbin/exim4 ]; then
  apt-get update -qq
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
  had_policy=0
  [ -e /usr/sbin/policy-rc.d ] && had_policy=1
  if [ $had_policy = 0 ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; fi
  apt-get install -y -qq postfix postgrey nsd >/dev/null
  if [ $had_policy = 0 ]; then rm -f /usr/sbin/policy-rc.d; fi
fi

unpack() { # name package
  local name=$1 package=$2
  [ -d "$prefix/$name" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -qq "$package" 2>/dev/null)
  mkdir -p "$prefix/$name.partial"
  dpkg-deb -x "$tmp"/"$package"_*.deb "$prefix/$name.partial"
  rm -rf "$tmp"
  mv "$prefix/$name.partial" "$prefix/$name"
}
mkdir -p $prefix
# Their libraries (what `dpkg-deb -f … Depends` lists, less what conflicts with Postfix).
apt-get install -y -qq libevent-2.1-7 libdb5.3 libssl3 libgnutls-dane0 libgnutls30 libidn12 libidn2-0 libnsl2 libpcre2-8-0 >/dev/null
unpack opensmtpd opensmtpd
unpack exim4 exim4-daemon-light

# OpenSMTPD's privilege-separation users (as its Debian postinst makes them).
for name in opensmtpd opensmtpq; do
  getent group $name >/dev/null || addgroup --system --quiet $name
  id $name >/dev/null 2>&1 || adduser --system --quiet --home /var/lib/opensmtpd/empty --no-create-home --disabled-password --ingroup $name $name
done
mkdir -p /var/lib/opensmtpd/empty /var/spool/smtpd /etc/exim4
chmod 711 /var/spool/smtpd
# Exim's compiled-in user (as exim4-base's postinst makes it).
getent group Debian-exim >/dev/null || addgroup --system --quiet --allow-bad-names Debian-exim
id Debian-exim >/dev/null 2>&1 || adduser --system --quiet --allow-bad-names --home /var/spool/exim4 --no-create-home --disabled-password --ingroup Debian-exim Debian-exim

for bin in /usr/sbin/postfix /usr/sbin/postgrey /usr/sbin/nsd $prefix/opensmtpd/usr/sbin/smtpd $prefix/exim4/usr/sbin/exim4; do
  [ -x "$bin" ] || { echo "install-mail-servers: $bin is missing" >&2; exit 1; }
done
if ldd $prefix/opensmtpd/usr/sbin/smtpd $prefix/exim4/usr/sbin/exim4 | grep -q 'not found'; then
  echo "install-mail-servers: a library is missing:" >&2
  ldd $prefix/opensmtpd/usr/sbin/smtpd $prefix/exim4/usr/sbin/exim4 | grep 'not found' >&2
  exit 1
fi
echo "install-mail-servers: postfix $(postconf -d -h mail_version 2>/dev/null), nsd $(nsd -v 2>&1 | head -1 | awk '{print $3}'), $($prefix/opensmtpd/usr/sbin/smtpd -h 2>&1 | head -1 | sed 's/version: //'), exim $($prefix/exim4/usr/sbin/exim4 -bV -C /dev/null 2>/dev/null | head -1 | awk '{print $3}')"
