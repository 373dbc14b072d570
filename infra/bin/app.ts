import { buildApp } from "#infra/app";

// Entry point of `cdk synth` / `cdk deploy` (see cdk.json).
buildApp().app.synth();
