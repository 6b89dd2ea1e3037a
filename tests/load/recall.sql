\set t random(0, 9)
\set u random(0, 4)
\set topic random(0, 29)
SELECT load.recall(:t, :u, :topic);
