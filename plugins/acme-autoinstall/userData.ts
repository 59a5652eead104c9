/**
 * The autoinstall seed, as Mustache. `late-commands` run in the installed system's chroot once the install is done:
 * the host's first act is to join the fleet as a `node` agent with a token that only this ISO carries.
 */
export const userDataTemplate = `#cloud-config
autoinstall:
  version: 1
  identity:
    hostname: {{hostname}}
    username: ubuntu
    password: "!"
  ssh:
    install-server: true
    allow-pw: false
    authorized-keys:
{{#sshKeys}}
      - "{{.}}"
{{/sshKeys}}
  late-commands:
    - curtin in-target --target=/target -- bcd node --site {{siteId}} --node {{nodeId}} --nats {{natsUrl}} --state /var/lib/bcd --join-token {{joinToken}}{{#joinCredsUrl}} --join-creds {{joinCredsUrl}}{{/joinCredsUrl}}
`;

export const metaDataTemplate = `instance-id: {{nodeId}}
local-hostname: {{hostname}}
`;
