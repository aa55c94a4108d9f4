-- One statement-level trigger per base table: any write refreshes the count once per statement.
CREATE TRIGGER {refresh_trigger} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION {refresh}();
