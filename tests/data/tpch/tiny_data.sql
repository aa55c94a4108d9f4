INSERT INTO region SELECT i, (ARRAY['AFRICA','AMERICA','ASIA','EUROPE','MIDDLE EAST'])[i + 1], 'r' FROM generate_series(0, 4) i;
INSERT INTO nation SELECT i, (ARRAY['ALGERIA','ARGENTINA','BRAZIL','CANADA','EGYPT','ETHIOPIA','FRANCE','GERMANY','INDIA',
    'INDONESIA','IRAN','IRAQ','JAPAN','JORDAN','KENYA','MOROCCO','MOZAMBIQUE','PERU','CHINA','ROMANIA','SAUDI ARABIA',
    'VIETNAM','RUSSIA','UNITED KINGDOM','UNITED STATES'])[i + 1],
    (ARRAY[0,1,1,1,4,0,3,3,2,2,4,4,2,4,0,0,0,1,2,3,4,2,3,3,1])[i + 1], 'n' FROM generate_series(0, 24) i;
INSERT INTO part SELECT i, (ARRAY['forest green','blue metallic','green puff','forest khaki','red'])[i % 5 + 1],
    'Manufacturer#1', (ARRAY['Brand#12','Brand#23','Brand#34','Brand#45','Brand#23'])[i % 5 + 1],
    (ARRAY['ECONOMY ANODIZED STEEL','PROMO BRUSHED BRASS','MEDIUM POLISHED TIN','LARGE PLATED BRASS','STANDARD BRASS',
           'PROMO POLISHED COPPER'])[i % 6 + 1],
    (ARRAY[15, 49, 3, 5, 9, 14, 1])[i % 7 + 1],
    (ARRAY['SM CASE','MED BOX','LG CASE','SM PACK','MED BAG','LG BOX'])[i % 6 + 1], 900 + i, 'p' FROM generate_series(1, 42) i;
INSERT INTO supplier SELECT i, 'Supplier#' || i, 'addr' || i, (ARRAY[7, 6, 3, 20, 2, 12, 7, 21, 20, 8])[i],
    '1' || i || '-555', i * 100 - 300,
    CASE WHEN i % 4 = 0 THEN 'a Customer with Complaints' ELSE 'quiet' END FROM generate_series(1, 10) i;
INSERT INTO partsupp SELECT p, s, (p * 7 + s) % 50 + 1, ((p * 13 + s * 7) % 100) / 10.0 + 1, 'ps'
    FROM generate_series(1, 42) p, generate_series(1, 10) s WHERE (p + s) % 3 = 0;
INSERT INTO customer SELECT i, 'Customer#' || i, 'a' || i, (ARRAY[7, 6, 3, 20, 2, 12, 8, 21, 1, 18])[i % 10 + 1],
    (ARRAY['13','31','23','29','30','18','17','11'])[i % 8 + 1] || '-555-' || i, i * 37 % 1000 - 200,
    (ARRAY['BUILDING','AUTOMOBILE','MACHINERY'])[i % 3 + 1], 'c' FROM generate_series(1, 24) i;
INSERT INTO orders SELECT i, i % 20 + 1, (ARRAY['F','O','F','P'])[i % 4 + 1], 1000 + i,
    DATE '1993-01-01' + (i * 53) % 2000,
    (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[i % 5 + 1], 'Clerk', 0,
    CASE WHEN i % 7 = 0 THEN 'special requests' ELSE 'o' END FROM generate_series(1, 60) i;
INSERT INTO lineitem SELECT o, (o * 5 + l) % 42 + 1, (o + l) % 10 + 1, l, (o * 11 + l * 3) % 40 + 1,
    ((o * 11 + l * 3) % 40 + 1) * 10, ((o + l) % 11) / 100.0, 0.02, (ARRAY['R','A','N'])[(o + l) % 3 + 1],
    (ARRAY['O','F'])[o % 2 + 1], d + l * 3, d + 20 + (o % 9), d + 14 + (o * 3 + l * 5) % 17,
    (ARRAY['DELIVER IN PERSON','NONE','TAKE BACK RETURN'])[(o + l) % 3 + 1],
    (ARRAY['MAIL','SHIP','AIR','AIR REG','TRUCK'])[(o * 3 + l) % 5 + 1], 'l'
    FROM (SELECT o, DATE '1993-01-01' + (o * 53) % 2000 AS d FROM generate_series(1, 60) o) x, generate_series(1, 4) l
    WHERE l <= o % 4 + 1;
