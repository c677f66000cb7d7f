// Former home of the group-relative algorithms' policy; it lives in policy/ now.
export { GroupLmPolicy } from './policy/group-lm-policy.js';
