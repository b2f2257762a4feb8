/** The local stack's regions: where each local pool pretends to be (its region's usual cloud location). */
export const LOCAL_REGIONS = [
  { name: "us", portVar: "US_PORT", port: 9001, latitude: 39.04, longitude: -77.49, continent: "NA", place: "Ashburn" },
  { name: "eu", portVar: "EU_PORT", port: 9002, latitude: 50.11, longitude: 8.68, continent: "EU", place: "Frankfurt" },
  { name: "ap", portVar: "AP_PORT", port: 9003, latitude: 35.68, longitude: 139.69, continent: "AS", place: "Tokyo" },
] as const;

export type LocalRegion = (typeof LOCAL_REGIONS)[number];
