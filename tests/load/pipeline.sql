\set t random(0, 9)
\set u random(0, 4)
\set topic random(0, 29)
\set ch random(0, 3)
\set sys random(0, 4)
SELECT load.pipeline(:t, :u, :topic, :ch, :sys);
