/** A location the user shared (a WhatsApp location pin): `{<variable>_location}`. */
export interface SharedLocation {
  latitude: number;
  longitude: number;
  /** Empty unless the user picked a place rather than dropping a pin. */
  address: string;
  label: string;
}

/** The location in a webhook form (`Latitude`, `Longitude`, maybe `Address`, `Label`); undefined when there is none. */
export function readLocation(params: Record<string, string>): SharedLocation | undefined {
  if (!params.Latitude?.trim() || !params.Longitude?.trim()) return undefined;
  const latitude = Number(params.Latitude);
  const longitude = Number(params.Longitude);
  if (!(Math.abs(latitude) <= 90) || !(Math.abs(longitude) <= 180)) return undefined;
  return { latitude, longitude, address: (params.Address ?? '').trim(), label: (params.Label ?? '').trim() };
}

/** A location as answer text: its label or address, else "latitude,longitude". */
export function locationText(location: SharedLocation): string {
  return location.label || location.address || `${location.latitude},${location.longitude}`;
}
