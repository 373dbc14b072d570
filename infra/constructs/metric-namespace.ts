import { Stack } from "aws-cdk-lib";
import type { Construct } from "constructs";

/**
 * The CloudWatch namespace of the product's own metrics (the functions' EMF metrics through
 * POWERTOOLS_METRICS_NAMESPACE, the authorizer's metric filter, the alarms and the dashboard):
 * the stack's name, so two stacks in one account and region never add into each other's metrics
 * or alarms. The default stack name, FieldOperations, keeps the namespace every install used so far.
 */
export function productMetricNamespace(scope: Construct): string {
  return Stack.of(scope).stackName;
}
