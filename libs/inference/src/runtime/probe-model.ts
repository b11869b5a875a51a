/**
 * An 82-byte ONNX model (one Identity node, float32 [1] -> [1], opset 13), built with onnx-proto's
 * `onnx.ModelProto.encode`. Creating a CUDA session on it tells whether the CUDA execution
 * provider really works here (libraries, driver, device) before any real model is loaded.
 */
export const PROBE_MODEL_BASE64 =
  'CAgSC3N3aXRjaGJvYXJkOjsKEAoBeBIBeSIISWRlbnRpdHkSBXByb2JlWg8KAXgSCgoICAESBAoCCAFiDwoBeRIKCggIARIECgIIAUIECgAQDQ==';
