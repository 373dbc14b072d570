/** The id of every data type's title field (a record's `dataId`). Apart from the schemas so record rules can name it without building them. */
export const TITLE_FIELD_ID = "dataId";
