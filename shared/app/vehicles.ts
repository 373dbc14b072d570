import { createVehicleService } from "#shared/domain/vehicles/service";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/** Composition root of the vehicle area: the domain service over its DynamoDB store. */
export const vehicleService = createVehicleService(dynamoVehicleStore);
