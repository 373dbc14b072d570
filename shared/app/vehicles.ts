import { customValues } from "#shared/app/extensions";
import { createVehicleService } from "#shared/domain/vehicles/service";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/** Composition root of the vehicle area: the domain service over its DynamoDB store, custom values by the vehicle extension type. */
export const vehicleService = createVehicleService(dynamoVehicleStore, customValues);
