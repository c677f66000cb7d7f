// Former home of the model option's resolution; it lives in agent/ now.
export {
  DEFAULT_CODE_MODEL_OPTION,
  DEFAULT_MODEL_OPTION,
  embeddedStopTokenIds,
  hasChatTemplateSync,
  INFORMATIVE_PRIOR_MODEL_OPTION,
  isHubModelId,
  resolveModelPath,
  settledPromptFormat,
} from './agent/model-path.js';
