import { createAppIntegrationService } from "#shared/domain/app-integrations/service";
import { s3CertificateStorage } from "#shared/blob/certificate-storage";
import { dynamoAppIntegrationStore } from "#shared/store/app-integration-store";

/** Composition root of the app integration area: the domain service over DynamoDB (items) and S3 (certificate files). */
export const appIntegrationService = createAppIntegrationService(dynamoAppIntegrationStore, s3CertificateStorage);
