\set t random(0, 9)
SELECT load.retract(:t);
